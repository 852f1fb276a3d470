//! The `AdmissionReview` exchange with a webhook, sans IO: the request body
//! (`webhook/request/admissionreview.go`, `CreateV1AdmissionReview`), what client-go's REST client makes of
//! the HTTP answer (`client-go/rest/request.go`, `transformResponse` and `Result.Into`), the checks on the
//! review that comes back (`VerifyAdmissionResponse`), a refusal's status (`webhook/errors/statuserror.go`,
//! `ToStatusErr`) and a mutating webhook's JSON patch (`mutating/dispatcher.go`, `callAttrMutatingHook`).
//! Upstream's files are under `staging/src/k8s.io/apiserver/pkg/admission/plugin/`.

use base64::Engine;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::go_text::quote;
use crate::registry::admission::{Attributes, Operation};
use crate::registry::error::RegistryError;
use crate::registry::user::UserInfo;

/// The `AdmissionReview` versions kube-apiserver speaks, in the webhook's order of preference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReviewVersion {
    V1,
    V1beta1,
}

impl ReviewVersion {
    pub(crate) fn api_version(self) -> &'static str {
        match self {
            ReviewVersion::V1 => "admission.k8s.io/v1",
            ReviewVersion::V1beta1 => "admission.k8s.io/v1beta1",
        }
    }
}

/// `CreateAdmissionObjects`: the first of the webhook's `admissionReviewVersions` kube-apiserver knows.
pub(crate) fn pick_version(accepted: &[Value]) -> Result<ReviewVersion, String> {
    accepted
        .iter()
        .find_map(|v| match v.as_str() {
            Some("v1") => Some(ReviewVersion::V1),
            Some("v1beta1") => Some(ReviewVersion::V1beta1),
            _ => None,
        })
        .ok_or_else(|| "webhook does not accept known AdmissionReview versions (v1, v1beta1)".to_string())
}

/// A request's uid for one webhook call: a hash of the call's sequence number, the request's attributes and
/// the webhook's name, written as a version-4 UUID. Upstream draws a random one; a hash keeps simulated runs
/// reproducible while two calls still never share one.
pub(crate) fn request_uid(seq: u64, attrs: &Attributes<'_>, webhook: &str) -> String {
    let mut hasher = Sha256::new();
    let r = attrs.resource;
    let key = format!(
        "{seq}\0{}\0{}\0{}\0{}\0{}\0{}\0{}\0{webhook}",
        attrs.operation.as_str(),
        r.group,
        r.version,
        r.plural,
        attrs.subresource,
        attrs.namespace,
        attrs.name
    );
    hasher.update(key.as_bytes());
    let mut b: [u8; 16] = [0; 16];
    b.copy_from_slice(&hasher.finalize()[..16]);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// The kind of the object a request carries, as `(group, version, kind)`: the resource's own, except the
/// `/scale` subresource's `autoscaling/v1` `Scale`.
fn request_kind(attrs: &Attributes<'_>) -> (String, String, String) {
    let r = attrs.resource;
    if attrs.subresource == "scale" {
        return ("autoscaling".into(), "v1".into(), "Scale".into());
    }
    (r.group.clone(), r.version.clone(), r.kind.clone())
}

/// The operation's options object (`CreateOptions`, `UpdateOptions`, `DeleteOptions`) as the handlers set
/// it: its type, and `dryRun: ["All"]` on a dry run. Other options (field manager, grace period) are not
/// known to admission here.
fn options(attrs: &Attributes<'_>) -> Value {
    let kind = match attrs.operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
        Operation::Connect => return Value::Null,
    };
    let mut opts = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if attrs.dry_run {
        opts["dryRun"] = json!(["All"]);
    }
    opts
}

/// `authenticationv1.UserInfo` of the user, its empty fields left out.
fn user_info(user: &UserInfo) -> Value {
    let mut info = Map::new();
    if !user.username.is_empty() {
        info.insert("username".into(), json!(user.username));
    }
    if !user.uid.is_empty() {
        info.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        info.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        info.insert("extra".into(), json!(user.extra));
    }
    Value::Object(info)
}

/// `CreateAdmissionRequest`: the `AdmissionRequest` without uid, object and old object, as CEL's `request`
/// variable sees it.
pub(crate) fn admission_request(attrs: &Attributes<'_>, user: &UserInfo) -> Value {
    let r = attrs.resource;
    let (group, version, kind) = request_kind(attrs);
    let gvk = json!({"group": group, "version": version, "kind": kind});
    let gvr = json!({"group": r.group, "version": r.version, "resource": r.plural});
    let mut req = Map::new();
    req.insert("kind".into(), gvk.clone());
    req.insert("resource".into(), gvr.clone());
    if !attrs.subresource.is_empty() {
        req.insert("subResource".into(), json!(attrs.subresource));
    }
    req.insert("requestKind".into(), gvk);
    req.insert("requestResource".into(), gvr);
    if !attrs.subresource.is_empty() {
        req.insert("requestSubResource".into(), json!(attrs.subresource));
    }
    if !attrs.name.is_empty() {
        req.insert("name".into(), json!(attrs.name));
    }
    if !attrs.namespace.is_empty() {
        req.insert("namespace".into(), json!(attrs.namespace));
    }
    req.insert("operation".into(), json!(attrs.operation.as_str()));
    req.insert("userInfo".into(), user_info(user));
    req.insert("dryRun".into(), json!(attrs.dry_run));
    req.insert("options".into(), options(attrs));
    Value::Object(req)
}

/// The `AdmissionReview` sent to a webhook: the request with its uid, the new object (null on delete) and
/// the old one (null on create).
pub(crate) fn review(
    version: ReviewVersion,
    uid: &str,
    attrs: &Attributes<'_>,
    user: &UserInfo,
    obj: &Value,
    old: &Value,
) -> Value {
    let mut request = admission_request(attrs, user);
    if let Some(map) = request.as_object_mut() {
        map.insert("uid".into(), json!(uid));
        map.insert("object".into(), obj.clone());
        map.insert("oldObject".into(), old.clone());
    }
    json!({"kind": "AdmissionReview", "apiVersion": version.api_version(), "request": request})
}

/// An HTTP answer as the transport hands it over.
#[derive(Debug)]
pub(crate) struct HttpAnswer {
    pub(crate) status: u16,
    pub(crate) content_type: Option<String>,
    pub(crate) body: Vec<u8>,
}

/// `NewGenericServerResponse`'s message for a status code without a structured error.
fn generic_server_message(code: u16, server_message: &str) -> String {
    match code {
        409 => "the server reported a conflict".into(),
        404 => "the server could not find the requested resource".into(),
        400 => "the server rejected our request for an unknown reason".into(),
        401 => "the server has asked for the client to provide credentials".into(),
        403 | 415 => server_message.into(),
        406 if server_message.is_empty() || server_message == "unknown" => {
            "the server was unable to respond with a content type that the client supports".into()
        }
        406 => server_message.into(),
        405 => "the server does not allow this method on the requested resource".into(),
        422 => "the server rejected our request due to an error in our request".into(),
        503 => "the server is currently unable to handle the request".into(),
        504 => {
            "the server was unable to return a response in the time allotted, but may still be processing the request"
                .into()
        }
        429 => "the server has received too many requests and has asked us to try again later".into(),
        c if c >= 500 => {
            format!("an error on the server ({}) has prevented the request from succeeding", quote(server_message))
        }
        c => format!("the server responded with the status code {c} but did not return more information"),
    }
}

/// Go's `quoteChar` in `encoding/json` errors: `'x'`, `'\''`, `'"'`.
fn go_quote_char(c: char) -> String {
    match c {
        '\'' => "'\\''".into(),
        '"' => "'\"'".into(),
        c => {
            let q = quote(&c.to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

/// Go's `encoding/json` error for a body that is not JSON, for the common cases (a body that does not start
/// like JSON, one cut short, one with bytes after the value); other syntax errors keep serde_json's words.
fn go_json_error(body: &[u8], err: &serde_json::Error) -> String {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim_start_matches([' ', '\t', '\n', '\r']);
    match trimmed.chars().next() {
        None => return "unexpected end of JSON input".into(),
        Some(c) if !matches!(c, '{' | '[' | '"' | '-' | '0'..='9' | 't' | 'f' | 'n') => {
            return format!("invalid character {} looking for beginning of value", go_quote_char(c));
        }
        _ => {}
    }
    if err.is_eof() {
        return "unexpected end of JSON input".into();
    }
    if err.to_string().starts_with("trailing characters") {
        // serde_json stops at the first byte after the value; the column is 1-based.
        let offset: usize = text.lines().take(err.line().saturating_sub(1)).map(|l| l.len() + 1).sum::<usize>()
            + err.column().saturating_sub(1);
        if let Some(c) = text.get(offset..).and_then(|s| s.chars().next()) {
            return format!("invalid character {} after top-level value", go_quote_char(c));
        }
    }
    err.to_string()
}

/// Go's `UnmarshalTypeError` name of a JSON value's kind.
fn go_json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What `Request.Do(ctx).Into(&review)` returns for an answer: the decoded review, or the error text that
/// upstream wraps as `failed to call webhook: <text>`.
pub(crate) fn decode_answer(answer: &HttpAnswer) -> Result<Value, String> {
    let content_type = answer.content_type.clone().unwrap_or_else(|| "application/json".to_string());
    if !(200..=206).contains(&answer.status) {
        // A `Status` of failure in the body is the error; otherwise the generic one for the code.
        if let Ok(body) = serde_json::from_slice::<Value>(&answer.body) {
            let is_status = body.get("kind").and_then(Value::as_str) == Some("Status");
            if is_status && body.get("status").and_then(Value::as_str) == Some("Failure") {
                return Err(body.get("message").and_then(Value::as_str).unwrap_or("").to_string());
            }
        }
        let text_response = match answer.content_type.as_deref() {
            None | Some("") => true,
            Some(ct) => ct.trim_start().to_ascii_lowercase().starts_with("text/"),
        };
        let body = &answer.body[..answer.body.len().min(2048)];
        let message = if text_response { String::from_utf8_lossy(body).trim().to_string() } else { "unknown".into() };
        return Err(generic_server_message(answer.status, &message));
    }
    if answer.body.is_empty() {
        return Err(format!("0-length response with status code: {} and content type: {content_type}", answer.status));
    }
    let parse_error = |e: String| format!("couldn't get version/kind; json parse error: {e}");
    let body: Value = serde_json::from_slice(&answer.body).map_err(|e| parse_error(go_json_error(&answer.body, &e)))?;
    match &body {
        Value::Object(_) | Value::Null => {}
        other => {
            return Err(parse_error(format!(
                "json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
                go_json_kind(other)
            )))
        }
    }
    // The typed decode of the fields kube-apiserver reads; a wrong type is Go's `UnmarshalTypeError`, and a
    // patch (Go's `[]byte`) must be standard base64.
    if let Some(patch) = body.pointer("/response/patch").and_then(Value::as_str) {
        if let Err(e) = base64::engine::general_purpose::STANDARD.decode(patch.as_bytes()) {
            let at = match e {
                base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => at,
                base64::DecodeError::InvalidLength(at) => at,
                base64::DecodeError::InvalidPadding => patch.len(),
            };
            return Err(format!("illegal base64 data at input byte {at}"));
        }
    }
    for (field, want, ok) in [
        ("uid", "types.UID", Value::is_string as fn(&Value) -> bool),
        ("allowed", "bool", Value::is_boolean),
        ("patchType", "v1.PatchType", Value::is_string),
    ] {
        if let Some(v) = body.pointer(&format!("/response/{field}")).filter(|v| !v.is_null() && !ok(v)) {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field AdmissionResponse.response.{field} of type {want}",
                go_json_kind(v)
            ));
        }
    }
    Ok(body)
}

/// A webhook's answer that passed `VerifyAdmissionResponse`.
#[derive(Debug, PartialEq)]
pub(crate) struct Verified {
    pub(crate) allowed: bool,
    /// The decoded JSON patch bytes (mutating webhooks only).
    pub(crate) patch: Vec<u8>,
    pub(crate) patch_type: String,
    pub(crate) result: Option<Value>,
    pub(crate) warnings: Vec<String>,
}

/// `schema.GroupVersionKind.String()` of a review's `apiVersion` and `kind`.
fn gvk_string(review: &Value) -> String {
    let api_version = review.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = review.get("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

/// `VerifyAdmissionResponse`: the checks on the review a webhook answered with. The error text is wrapped
/// by the caller as `received invalid webhook response: <text>`.
pub(crate) fn verify(uid: &str, version: ReviewVersion, mutating: bool, review: &Value) -> Result<Verified, String> {
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".into());
    };
    let text = |key: &str| response.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let patch_text = text("patch");
    // `decode_answer` already refused a patch that is not base64.
    let patch = base64::engine::general_purpose::STANDARD.decode(patch_text.as_bytes()).unwrap_or_default();
    let patch_type = response.get("patchType").filter(|v| !v.is_null());
    let allowed = response.get("allowed").and_then(Value::as_bool).unwrap_or(false);
    let warnings = response
        .get("warnings")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |w| w.iter().filter_map(Value::as_str).map(str::to_string).collect());
    let result = response.get("status").filter(|v| v.is_object()).cloned();
    if version == ReviewVersion::V1beta1 {
        // v1beta1 reviews carry no patch type and are not checked further.
        let patch = if mutating { patch } else { Vec::new() };
        let patch_type = if patch.is_empty() { String::new() } else { "JSONPatch".to_string() };
        return Ok(Verified { allowed, patch, patch_type, result, warnings });
    }
    let got_uid = text("uid");
    if got_uid != uid {
        return Err(format!("expected response.uid={}, got {}", quote(uid), quote(&got_uid)));
    }
    let got = gvk_string(review);
    if got != "admission.k8s.io/v1, Kind=AdmissionReview" {
        return Err(format!("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {got}"));
    }
    if !mutating {
        if !patch.is_empty() {
            return Err("validating webhook may not return response.patch".into());
        }
        if patch_type.is_some() {
            return Err("validating webhook may not return response.patchType".into());
        }
        return Ok(Verified { allowed, patch, patch_type: String::new(), result, warnings });
    }
    if !patch.is_empty() && patch_type.is_none() {
        return Err("webhook returned response.patch but not response.patchType".into());
    }
    if patch.is_empty() && patch_type.is_some() {
        return Err("webhook returned response.patchType but not response.patch".into());
    }
    let patch_type = patch_type.and_then(Value::as_str).unwrap_or("").to_string();
    if !patch.is_empty() && patch_type.is_empty() {
        return Err(format!("webhook returned invalid response.patchType of {}", quote(&patch_type)));
    }
    Ok(Verified { allowed, patch, patch_type, result, warnings })
}

/// `ToStatusErr`: a webhook's refusal as the request's answer. The webhook's own status is kept, with a
/// code of at least 400, `Failure`, and its message prefixed with who refused.
pub(crate) fn denial(webhook: &str, result: Option<&Value>) -> Status {
    let mut status: Status = result.and_then(|r| serde_json::from_value(r.clone()).ok()).unwrap_or_default();
    let denied_by = format!("admission webhook {} denied the request", quote(webhook));
    if status.code.unwrap_or(0) < 400 {
        status.code = Some(400);
    }
    if matches!(status.status.as_deref(), None | Some("") | Some("Success")) {
        status.status = Some("Failure".into());
    }
    let message = status.message.as_deref().unwrap_or("");
    let reason = status.reason.as_deref().unwrap_or("");
    status.message = Some(if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    });
    status
}

/// What applying a mutating webhook's patch did.
#[derive(Debug, PartialEq)]
pub(crate) enum Patched {
    /// No patch, or an empty one.
    Unchanged,
    /// The patched object, and whether it differs from the object before.
    Object(Value, bool),
}

/// Why a patch was not applied: upstream fails the request with an internal error whatever the failure
/// policy, except for an unsupported patch type, which is a failure to call the webhook.
#[derive(Debug, PartialEq)]
pub(crate) enum PatchError {
    Internal(String),
    UnsupportedType(String),
}

/// The patch part of `callAttrMutatingHook`: decode the JSON patch, refuse one on an operation without an
/// object, apply it.
pub(crate) fn apply_patch(webhook: &str, verified: &Verified, obj: &Value) -> Result<Patched, PatchError> {
    if verified.patch.is_empty() {
        return Ok(Patched::Unchanged);
    }
    let ops: json_patch::Patch =
        serde_json::from_slice(&verified.patch).map_err(|e| PatchError::Internal(e.to_string()))?;
    if ops.0.is_empty() {
        return Ok(Patched::Unchanged);
    }
    if obj.is_null() {
        return Err(PatchError::Internal(format!(
            "admission webhook {} attempted to modify the object, which is not supported for this operation",
            quote(webhook)
        )));
    }
    if verified.patch_type != "JSONPatch" {
        return Err(PatchError::UnsupportedType(format!("unsupported patch type {}", quote(&verified.patch_type))));
    }
    let mut patched = obj.clone();
    json_patch::patch(&mut patched, &ops).map_err(|e| PatchError::Internal(e.to_string()))?;
    let changed = &patched != obj;
    Ok(Patched::Object(patched, changed))
}

/// `failed calling webhook "name": <reason>` (`ErrCallingWebhook.Error`).
pub(crate) fn calling_error(webhook: &str, reason: &str) -> String {
    format!("failed calling webhook {}: {reason}", quote(webhook))
}

/// A failure to call a webhook under `failurePolicy: Fail`: `NewInternalError` of the calling error.
pub(crate) fn call_failed(webhook: &str, reason: &str) -> RegistryError {
    RegistryError::Internal(calling_error(webhook, reason))
}

/// `NewDryRunUnsupportedErr`: a dry run reaching a webhook that may have side effects.
pub(crate) fn dry_run_unsupported(webhook: &str) -> RegistryError {
    RegistryError::BadRequest(format!("admission webhook {} does not support dry run", quote(webhook)))
}
