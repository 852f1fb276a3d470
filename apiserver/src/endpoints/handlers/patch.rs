//! PATCH (kube's `PatchResource`): the `Content-Type` names the patch type, and the patch is applied to the
//! current object inside the registry's guaranteed update, so a retry re-applies it to newer state
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go`). JSON patch (RFC 6902), JSON merge patch
//! (RFC 7386), for built-in kinds strategic merge patch ([`crate::endpoints::strategic_merge`]), and
//! server-side apply (`application/apply-patch+yaml`, [`crate::registry::managed_fields`]) are served here;
//! strategic merge patch of a custom resource answers 415 with the types that are served. Every patch's
//! changes go to its field manager in `metadata.managedFields`.
//!
//! Texts are kube's: a body that does not decode as its patch type is a 400 (`error decoding patch:
//! unexpected end of JSON input`, see [`decode_patch`]), reported only once the object is found, since
//! kube decodes the patch when it applies it; more than 10,000 operations is a 413; a patch that cannot
//! apply (a failed `test`, a missing path) is the generic 422. Fields the patched object's kind lacks are
//! judged by `fieldValidation` as kube's patcher judges them: under `Strict` a 422 on `patch` quoting the
//! patched object, under `Warn` (the default) one `Warning` per field.

use std::sync::{Arc, Mutex};

use http::{Response, StatusCode};
use serde_json::Value;

use crate::endpoints::codec::go_json_error;
use crate::endpoints::error::ApiError;
use crate::endpoints::handlers::write::{body_resource, check_scale, scale_of, validate_write_options};
use crate::endpoints::handlers::{Call, Target};
use crate::endpoints::query::{write_query, WriteQuery};
use crate::endpoints::response::Responder;
use crate::endpoints::strategic_merge::{self, SmpError};
use crate::endpoints::Body;
use crate::registry::field_error::FieldError;
use crate::registry::schema::schemas;
use crate::registry::store::ApplyRequest;
use crate::registry::{typecheck, RegistryError, Subresource};

/// The most operations a JSON patch may have (`maxJSONPatchOperations`).
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// A patch type, named by its media type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    /// The patch types served for built-in kinds, in the order a 415 lists them.
    pub(crate) const SERVED: [PatchType; 4] =
        [PatchType::Json, PatchType::Merge, PatchType::Strategic, PatchType::Apply];
    /// The patch types served for custom resources: no patch strategies, so no strategic merge patch
    /// (upstream's `crdHandler` leaves it out too).
    const SERVED_CUSTOM: [PatchType; 3] = [PatchType::Json, PatchType::Merge, PatchType::Apply];

    pub(crate) fn media_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }

    fn served_for(builtin: bool) -> &'static [PatchType] {
        if builtin {
            &PatchType::SERVED
        } else {
            &PatchType::SERVED_CUSTOM
        }
    }

    fn of_content_type(content_type: &str, builtin: bool) -> Option<PatchType> {
        let essence = content_type.split(';').next().unwrap_or("").trim();
        PatchType::served_for(builtin).iter().copied().find(|p| p.media_type() == essence)
    }
}

/// `PATCH .../NAME` and `PATCH .../NAME/SUBRESOURCE`.
pub(crate) async fn patch(call: &Call, target: &Target<'_>, responder: &Responder) -> Result<Response<Body>, ApiError> {
    let resource = body_resource(target);
    let builtin = typecheck::is_builtin(&resource);
    let patch_type =
        PatchType::of_content_type(call.header("content-type").unwrap_or(""), builtin).ok_or_else(|| {
            ApiError::UnsupportedMediaType {
                accepted: PatchType::served_for(builtin).iter().map(|p| p.media_type().to_string()).collect(),
            }
        })?;
    let options = write_query(&call.query);
    if patch_type == PatchType::Apply {
        return apply(call, target, responder, &options).await;
    }
    let manager = Some(options.manager(call.header("user-agent")));
    if call.query.first("force").is_some() {
        // `force` exists only for server-side apply.
        let mut errors = vec![FieldError::forbidden("force", "may not be specified for non-apply patch")];
        if let Err(ApiError::InvalidOptions { errors: more, .. }) = validate_write_options(&options, "PatchOptions") {
            errors.extend(more);
        }
        return Err(ApiError::InvalidOptions { kind: "PatchOptions".into(), errors });
    }
    validate_write_options(&options, "PatchOptions")?;
    // The patch is decoded inside the update, as kube's patcher decodes it when it applies it to the
    // current object: a patch of a missing object is a 404 whatever its body.
    let decoded = decode_patch(patch_type, &call.body, &options.field_validation);
    let mut apply: Box<dyn FnMut(&Value) -> Result<Value, RegistryError> + Send> = match decoded {
        Err(err) => Box::new(move |_: &Value| Err(err.clone())),
        Ok(Decoded::Json(ops)) => Box::new(move |current: &Value| {
            let ops = ops.clone()?;
            let mut doc = current.clone();
            // On a copy, dropped on failure: json-patch's own undo of a failed patch (`patch`) can itself
            // fail and panic (a `move` into its own child after an earlier operation; a fuzz finding), and
            // nothing needs undoing here.
            json_patch::patch_unsafe(&mut doc, &ops)
                .map_err(|err| RegistryError::PatchNotApplicable(err.to_string()))?;
            Ok(doc)
        }),
        Ok(Decoded::Merge(patch)) => Box::new(move |current: &Value| {
            let mut doc = current.clone();
            json_patch::merge(&mut doc, &patch);
            Ok(doc)
        }),
        Ok(Decoded::Apply) => unreachable!("apply is served above"),
        Ok(Decoded::Strategic(patch)) => {
            let definition = schemas().kind(&resource.group, &resource.version, &resource.kind).map(str::to_string);
            Box::new(move |current: &Value| {
                strategic_merge::apply(current, &patch, definition.as_deref(), &strategic_merge::BuiltinMeta)
                    .map_err(smp_error)
            })
        }
    };
    // The patched object's unknown fields, judged on every attempt (a conflict retries the patch on newer
    // state); the last attempt's warnings are the answer's.
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let directive = options.field_validation.clone();
    let seen = warnings.clone();
    let strategy_rest = target.rest.clone();
    let main = target.sub.is_none();
    let mut validated = move |current: &Value| -> Result<Value, RegistryError> {
        let patched = apply(current)?;
        let unknown = if directive == "Ignore" {
            Vec::new()
        } else {
            // As `field_validation`: a custom resource's schema decides what is unknown.
            main.then(|| strategy_rest.strategy().unknown_fields(&patched))
                .flatten()
                .unwrap_or_else(|| typecheck::unknown_fields(&resource, &patched))
        };
        let mut seen = seen.lock().expect("the warnings lock is never poisoned");
        seen.clear();
        if unknown.is_empty() {
            return Ok(patched);
        }
        if directive == "Strict" {
            let text = serde_json::to_string(&patched).expect("values serialize");
            return Err(RegistryError::Invalid {
                group: String::new(),
                kind: String::new(),
                name: String::new(),
                errors: vec![FieldError::invalid("patch", &text, &typecheck::strict_decoding_error(&unknown))],
            });
        }
        seen.extend(unknown.iter().map(|field| format!("unknown field {field:?}")));
        Ok(patched)
    };
    let sub = target.sub.map(|s| s.sub);
    if sub == Some(Subresource::Scale) {
        // The patch applies to the object's Scale, whose replicas then go into the object.
        let mut scaled = |current: &Value| -> Result<Value, RegistryError> {
            let scale = validated(&scale_of(target, current)?)?;
            check_scale(target, &scale)?;
            target.rest.strategy().apply_scale(current, &scale).ok_or(RegistryError::NoSuchPath)
        };
        // The replicas a Scale sets are the object's `spec.replicas`: its manager owns them, with the
        // subresource `scale`.
        let opts = options.update_options(manager, call.admission.clone());
        let patched = target.rest.patch(&target.namespace, &target.name, sub, &mut scaled, &opts).await?;
        let warnings = std::mem::take(&mut *warnings.lock().expect("the warnings lock is never poisoned"));
        return responder.with_warnings(warnings).object(StatusCode::OK, &scale_of(target, &patched)?);
    }
    let opts = options.update_options(manager, call.admission.clone());
    let patched = target.rest.patch(&target.namespace, &target.name, sub, &mut validated, &opts).await?;
    let warnings = std::mem::take(&mut *warnings.lock().expect("the warnings lock is never poisoned"));
    responder.with_warnings(warnings).object(StatusCode::OK, &patched)
}

/// `PATCH` with `application/apply-patch+yaml`: server-side apply. `fieldManager` is required, `force`
/// allowed; the body is YAML (or JSON, which is YAML) holding one object; the answer is 201 when the
/// apply created the object.
async fn apply(
    call: &Call,
    target: &Target<'_>,
    responder: &Responder,
    options: &WriteQuery,
) -> Result<Response<Body>, ApiError> {
    let mut errors = Vec::new();
    if options.field_manager.is_empty() {
        errors.push(FieldError::required("fieldManager", "is required for apply patch"));
    }
    if let Err(ApiError::InvalidOptions { errors: more, .. }) = validate_write_options(options, "PatchOptions") {
        errors.extend(more);
    }
    if !errors.is_empty() {
        return Err(ApiError::InvalidOptions { kind: "PatchOptions".into(), errors });
    }
    let force = call.query.bool("force");
    let sub = target.sub.map(|s| s.sub);
    let mut config = decode_apply(&call.body)?;
    if sub == Some(Subresource::Scale) {
        config = scale_config(target, &config)?;
    }
    let request = ApplyRequest { name: &target.name, sub, manager: &options.field_manager, force };
    if sub == Some(Subresource::Scale) {
        // An apply of a Scale is an apply of the replicas it maps to in the object, owned with the
        // subresource `scale`, answered as the object's Scale (it never creates: 404 without one).
        let opts = options.update_options(None, call.admission.clone());
        let (stored, _) = target.rest.apply(&target.namespace, config, &request, &opts).await?;
        return responder.object(StatusCode::OK, &scale_of(target, &stored)?);
    }
    let opts = options.update_options(None, call.admission.clone());
    let (stored, created) = target.rest.apply(&target.namespace, config, &request, &opts).await?;
    responder.object(if created { StatusCode::CREATED } else { StatusCode::OK }, &stored)
}

/// An applied `autoscaling/v1` `Scale` as the configuration it is of the object: its replicas at the
/// object's replicas path (`spec.replicas`, or a CRD's `specReplicasPath`), and nothing else.
fn scale_config(target: &Target<'_>, scale: &Value) -> Result<Value, RegistryError> {
    let text = |field: &str| scale.get(field).and_then(Value::as_str).unwrap_or("");
    if text("apiVersion") != "autoscaling/v1" || text("kind") != "Scale" {
        return Err(RegistryError::BadRequest(crate::registry::managed_fields::invalid_object_type(
            text("apiVersion"),
            text("kind"),
        )));
    }
    let r = &target.resource.resource;
    let skeleton =
        serde_json::json!({"apiVersion": r.api_version(), "kind": r.kind, "metadata": {"name": target.name}});
    let mut config = target.rest.strategy().apply_scale(&skeleton, scale).ok_or(RegistryError::NoSuchPath)?;
    // The Scale's resourceVersion is not a precondition of an apply.
    if let Some(meta) = config.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    Ok(config)
}

/// An apply body: one YAML (or JSON) object. Anything else is upstream's 400 `error decoding YAML: ...`
/// (the YAML parser's own words are serde_yaml's here, not Go's).
fn decode_apply(body: &[u8]) -> Result<Value, RegistryError> {
    let refuse = |why: String| RegistryError::BadRequest(format!("error decoding YAML: {why}"));
    let value: Value = serde_yaml::from_slice(body).map_err(|err| refuse(err.to_string()))?;
    match value {
        Value::Object(_) => Ok(value),
        Value::Null => Ok(Value::Object(Default::default())),
        other => Err(refuse(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_json_kind(&other)
        ))),
    }
}

/// A patch body decoded for its type. A JSON patch whose operations do not make sense (an unknown `op`)
/// still decodes, as evanphx/json-patch decodes it, and fails when applied (422).
enum Decoded {
    Json(Result<json_patch::Patch, RegistryError>),
    Merge(Value),
    Strategic(Value),
    /// Never made: an apply is decoded by [`apply`].
    Apply,
}

/// A strategic merge patch's failure as upstream's handler answers it (`interpretStrategicMergePatchError`):
/// 400 and 422 for the package's known errors, and for the rest the error as it is, which the server
/// answers 500.
fn smp_error(err: SmpError) -> RegistryError {
    match err {
        SmpError::BadRequest(text) => RegistryError::BadRequest(text),
        SmpError::Unprocessable(text) => RegistryError::PatchNotApplicable(text),
        SmpError::Failed(text) => RegistryError::Unconverted(text),
    }
}

/// Decodes a patch as kube's `jsonPatcher.applyJSPatch` does. Under `fieldValidation` Strict or Warn (the
/// default) the body is first decoded strictly into the patch's Go type, and a failure is
/// `error decoding patch: ...` in `encoding/json`'s words; under Ignore only the patch library decodes it
/// (`Invalid JSON Patch` for a merge patch, the decoder's words for a JSON patch).
fn decode_patch(patch_type: PatchType, body: &[u8], directive: &str) -> Result<Decoded, RegistryError> {
    let strict = directive != "Ignore";
    let go_type = match patch_type {
        PatchType::Json if strict => "[]handlers.jsonPatchOp",
        PatchType::Json => "jsonpatch.Patch",
        PatchType::Merge | PatchType::Strategic | PatchType::Apply => "map[string]interface {}",
    };
    let refuse = |why: String| {
        let text = match (strict, patch_type) {
            // `strategicPatchObject` answers the decoder's words alone.
            (_, PatchType::Strategic) => why,
            (true, _) => format!("error decoding patch: {why}"),
            (false, PatchType::Merge) => "Invalid JSON Patch".to_string(),
            (false, PatchType::Json) => why,
            (_, PatchType::Apply) => why,
        };
        RegistryError::BadRequest(text)
    };
    let value: Value = serde_json::from_slice(body).map_err(|err| refuse(go_json_error(&err, body)))?;
    let expected_array = patch_type == PatchType::Json;
    let shape_fits = match &value {
        Value::Null => true,
        Value::Array(_) => expected_array,
        Value::Object(_) => !expected_array,
        _ => false,
    };
    if !shape_fits {
        return Err(refuse(format!("json: cannot unmarshal {} into Go value of type {go_type}", go_json_kind(&value))));
    }
    match patch_type {
        PatchType::Apply => Ok(Decoded::Apply),
        PatchType::Merge => Ok(Decoded::Merge(value)),
        PatchType::Strategic => {
            Ok(Decoded::Strategic(if value.is_null() { Value::Object(Default::default()) } else { value }))
        }
        PatchType::Json => {
            let ops = match value {
                Value::Null => Vec::new(),
                Value::Array(ops) => ops,
                _ => unreachable!("the shape was checked"),
            };
            if ops.len() > MAX_JSON_PATCH_OPERATIONS {
                return Err(RegistryError::TooLarge(format!(
                    "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                    ops.len()
                )));
            }
            let typed = serde_json::from_value(Value::Array(ops))
                .map_err(|err| RegistryError::PatchNotApplicable(err.to_string()));
            Ok(Decoded::Json(typed))
        }
    }
}

/// How `encoding/json` names the JSON kind of a value in an unmarshal type error.
fn go_json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    use super::*;

    /// Objects of up to three levels, with short keys and string leaves (and, in patches, nulls).
    fn object(nulls: bool) -> impl Strategy<Value = Value> {
        let leaf = if nulls {
            prop_oneof![3 => "[a-c]{0,2}".prop_map(Value::from), 1 => Just(Value::Null)].boxed()
        } else {
            "[a-c]{0,2}".prop_map(Value::from).boxed()
        };
        let tree = leaf.prop_recursive(3, 24, 4, |inner| {
            proptest::collection::btree_map("[k-m]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()))
        });
        proptest::collection::btree_map("[k-m]", tree, 0..4).prop_map(|m| Value::Object(m.into_iter().collect()))
    }

    /// The JSON patch that does what the merge patch `patch` does to `doc`, written out operation by
    /// operation: a null removes the key (if there), an object merges into an object and replaces anything
    /// else (its nulls dropped), any other value replaces.
    fn as_json_patch(doc: &Value, patch: &Value, path: &str, ops: &mut Vec<Value>) {
        let Value::Object(fields) = patch else { return };
        for (key, value) in fields {
            let here = format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"));
            let current = doc.get(key);
            match value {
                Value::Null if current.is_some() => ops.push(json!({"op": "remove", "path": here})),
                Value::Null => {}
                Value::Object(_) if current.is_some_and(Value::is_object) => {
                    as_json_patch(current.unwrap(), value, &here, ops)
                }
                Value::Object(_) => {
                    let mut fresh = json!({});
                    json_patch::merge(&mut fresh, value);
                    ops.push(json!({"op": "add", "path": here, "value": fresh}));
                }
                other => ops.push(json!({"op": "add", "path": here, "value": other})),
            }
        }
    }

    proptest! {
        /// A merge patch and its JSON-patch equivalent, each decoded as the handler decodes its type, give
        /// the same object.
        #[test]
        fn a_merge_patch_and_its_json_patch_give_the_same_object(doc in object(false), patch in object(true)) {
            let Ok(Decoded::Merge(merge)) = decode_patch(PatchType::Merge, patch.to_string().as_bytes(), "Strict")
            else { panic!("the merge patch decodes") };
            let mut merged = doc.clone();
            json_patch::merge(&mut merged, &merge);
            let mut ops = Vec::new();
            as_json_patch(&doc, &patch, "", &mut ops);
            let body = Value::Array(ops).to_string();
            let Ok(Decoded::Json(Ok(ops))) = decode_patch(PatchType::Json, body.as_bytes(), "Strict")
            else { panic!("the JSON patch decodes: {body}") };
            let mut patched = doc.clone();
            json_patch::patch_unsafe(&mut patched, &ops).unwrap();
            prop_assert_eq!(patched, merged);
        }
    }
}
