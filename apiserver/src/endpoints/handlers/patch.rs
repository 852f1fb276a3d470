//! PATCH (kube's `PatchResource`): the `Content-Type` names the patch type, and the patch is applied to the
//! current object inside the registry's guaranteed update, so a retry re-applies it to newer state
//! (reference PA1-PA4). JSON patch (RFC 6902) and JSON merge patch (RFC 7386) are served here; strategic
//! merge patch and server-side apply answer 415 with the types that are served.
//!
//! Texts are kube's: a body that is not JSON is `invalid JSON patch` (400); a JSON patch that does not
//! decode is a 400 with the decoder's words; more than 10,000 operations is a 413; a patch that cannot
//! apply (a failed `test`, a missing path) is the generic 422. Fields the patched object's kind lacks are
//! judged by `fieldValidation` as kube's patcher judges them: under `Strict` a 422 on `patch` quoting the
//! patched object, under `Warn` (the default) one `Warning` per field.

use std::sync::{Arc, Mutex};

use http::{Response, StatusCode};
use serde_json::Value;

use crate::endpoints::error::ApiError;
use crate::endpoints::handlers::write::{body_resource, check_scale, validate_write_options};
use crate::endpoints::handlers::{Call, Target};
use crate::endpoints::query::write_query;
use crate::endpoints::response::Responder;
use crate::endpoints::Body;
use crate::registry::field_error::FieldError;
use crate::registry::strategies::workloads;
use crate::registry::{typecheck, RegistryError, Subresource};

/// The most operations a JSON patch may have (`maxJSONPatchOperations`).
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// A patch type, named by its media type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
}

impl PatchType {
    /// The patch types served, in the order a 415 lists them.
    pub const SERVED: [PatchType; 2] = [PatchType::Json, PatchType::Merge];

    pub fn media_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
        }
    }

    fn of_content_type(content_type: &str) -> Option<PatchType> {
        let essence = content_type.split(';').next().unwrap_or("").trim();
        PatchType::SERVED.into_iter().find(|p| p.media_type() == essence)
    }
}

/// `PATCH .../NAME` and `PATCH .../NAME/SUBRESOURCE`.
pub async fn patch(call: &Call, target: &Target<'_>, responder: &Responder) -> Result<Response<Body>, ApiError> {
    let patch_type = PatchType::of_content_type(call.header("content-type").unwrap_or("")).ok_or_else(|| {
        ApiError::UnsupportedMediaType {
            accepted: PatchType::SERVED.iter().map(|p| p.media_type().to_string()).collect(),
        }
    })?;
    let options = write_query(&call.query);
    if call.query.first("force").is_some() {
        // `force` exists only for server-side apply.
        let mut errors = vec![FieldError::forbidden("force", "may not be specified for non-apply patch")];
        if let Err(ApiError::InvalidOptions { errors: more, .. }) = validate_write_options(&options, "PatchOptions") {
            errors.extend(more);
        }
        return Err(ApiError::InvalidOptions { kind: "PatchOptions".into(), errors });
    }
    validate_write_options(&options, "PatchOptions")?;
    let patch: Value =
        serde_json::from_slice(&call.body).map_err(|_| ApiError::BadRequest("invalid JSON patch".into()))?;
    let mut apply: Box<dyn FnMut(&Value) -> Result<Value, RegistryError> + Send> = match patch_type {
        PatchType::Json => {
            let ops: json_patch::Patch =
                serde_json::from_value(patch).map_err(|err| ApiError::BadRequest(json_patch_decode_error(&err)))?;
            if ops.0.len() > MAX_JSON_PATCH_OPERATIONS {
                return Err(ApiError::Registry(RegistryError::TooLarge(format!(
                    "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                    ops.0.len()
                ))));
            }
            Box::new(move |current: &Value| {
                let mut doc = current.clone();
                json_patch::patch(&mut doc, &ops).map_err(|err| RegistryError::PatchNotApplicable(err.to_string()))?;
                Ok(doc)
            })
        }
        PatchType::Merge => Box::new(move |current: &Value| {
            let mut doc = current.clone();
            json_patch::merge(&mut doc, &patch);
            Ok(doc)
        }),
    };
    // The patched object's unknown fields, judged on every attempt (a conflict retries the patch on newer
    // state); the last attempt's warnings are the answer's.
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let resource = body_resource(target);
    let directive = options.field_validation.clone();
    let seen = warnings.clone();
    let mut validated = move |current: &Value| -> Result<Value, RegistryError> {
        let patched = apply(current)?;
        let unknown = if directive == "Ignore" { Vec::new() } else { typecheck::unknown_fields(&resource, &patched) };
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
            let scale = validated(&workloads::to_scale(current))?;
            check_scale(target, &scale)?;
            Ok(workloads::apply_scale(current, &scale))
        };
        let opts = options.update_options();
        let patched = target.rest.patch(&target.namespace, &target.name, sub, &mut scaled, &opts).await?;
        let warnings = std::mem::take(&mut *warnings.lock().expect("the warnings lock is never poisoned"));
        return responder.with_warnings(warnings).object(StatusCode::OK, &workloads::to_scale(&patched));
    }
    let patched =
        target.rest.patch(&target.namespace, &target.name, sub, &mut validated, &options.update_options()).await?;
    let warnings = std::mem::take(&mut *warnings.lock().expect("the warnings lock is never poisoned"));
    responder.with_warnings(warnings).object(StatusCode::OK, &patched)
}

/// How evanphx/json-patch reports a patch document it cannot decode: kube passes its text on.
fn json_patch_decode_error(err: &serde_json::Error) -> String {
    let text = err.to_string();
    if text.contains("invalid type") && text.contains("expected a sequence") {
        // A JSON patch must be an array of operations.
        return "json: cannot unmarshal object into Go value of type jsonpatch.Patch".into();
    }
    text
}
