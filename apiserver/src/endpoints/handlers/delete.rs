//! DELETE of one object (kube's `DeleteResource`) and of a collection (`DeleteCollection`).
//!
//! `DeleteOptions` come from the body when there is one (JSON or YAML, `kind: DeleteOptions` in any
//! group, as kube still accepts per-group options) and from the query otherwise; they are validated as
//! `ValidateDeleteOptions` does (422 on `DeleteOptions.meta.k8s.io`). The answer is what the registry
//! says: the object (finalizers or a grace period pending, or resources that return deleted objects) or a
//! Success `Status`.

use http::{Response, StatusCode};
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use serde_json::Value;

use crate::endpoints::codec;
use crate::endpoints::error::ApiError;
use crate::endpoints::handlers::{Call, Target};
use crate::endpoints::negotiate::Format;
use crate::endpoints::query::{self, Query};
use crate::endpoints::response::Responder;
use crate::endpoints::table::ListMeta;
use crate::endpoints::{ApiServer, Body};
use crate::registry::field_error::FieldError;
use crate::registry::options::{DeleteOptions, PropagationPolicy};
use crate::storage::Preconditions;

/// `DELETE .../NAME`.
pub(crate) async fn delete(
    call: &Call,
    target: &Target<'_>,
    responder: &Responder,
) -> Result<Response<Body>, ApiError> {
    let opts = DeleteOptions { admission: call.admission.clone(), ..delete_options(call)? };
    let result = target.rest.delete(&target.namespace, &target.name, &opts).await?;
    responder.object(StatusCode::OK, &result.body)
}

/// `DELETE .../RESOURCE`.
pub(crate) async fn delete_collection(
    server: &ApiServer,
    call: &Call,
    target: &Target<'_>,
    responder: &Responder,
) -> Result<Response<Body>, ApiError> {
    let list = query::list_query(&call.query, false, server.config.watch_list)?;
    let opts = DeleteOptions { admission: call.admission.clone(), ..delete_options(call)? };
    let result = target.rest.delete_collection(&target.namespace, &list.request, &opts).await?;
    let meta = ListMeta {
        resource_version: result.resource_version.to_string(),
        continue_token: result.continue_token,
        remaining_item_count: result.remaining_item_count,
    };
    let (kind, api_version) = (target.resource.list_kind(), target.resource.resource.api_version());
    responder.list(&kind, &api_version, &result.items, &meta, target.resource.custom)
}

/// The request's `DeleteOptions`, from its body or, without one, its query.
pub(crate) fn delete_options(call: &Call) -> Result<DeleteOptions, ApiError> {
    let wire = if call.body.is_empty() {
        from_query(&call.query)?
    } else {
        let format =
            Format::of_content_type(call.header("content-type")).ok_or_else(ApiError::unsupported_media_type)?;
        let value = codec::decode(&call.body, format, "DeleteOptions")?;
        if let Some(kind) = value.get("kind").and_then(Value::as_str).filter(|k| !k.is_empty() && *k != "DeleteOptions")
        {
            return Err(ApiError::BadRequest(format!(
                "{kind} in version {:?} cannot be handled as a DeleteOptions: decoded object cannot be converted to DeleteOptions",
                value.get("apiVersion").and_then(Value::as_str).unwrap_or("")
            )));
        }
        serde_json::from_value::<meta::DeleteOptions>(value).map_err(|err| ApiError::BadRequest(err.to_string()))?
    };
    from_wire(wire)
}

/// `DeleteOptions` as the registry takes them, once validated (`ValidateDeleteOptions`).
pub(crate) fn from_wire(wire: meta::DeleteOptions) -> Result<DeleteOptions, ApiError> {
    validate(&wire)?;
    let preconditions = wire.preconditions.map_or_else(Preconditions::default, |p| Preconditions {
        uid: p.uid.filter(|u| !u.is_empty()),
        resource_version: p.resource_version.filter(|r| !r.is_empty()),
    });
    let propagation = wire.propagation_policy.as_deref().map(|p| match p {
        "Orphan" => PropagationPolicy::Orphan,
        "Foreground" => PropagationPolicy::Foreground,
        _ => PropagationPolicy::Background,
    });
    Ok(DeleteOptions {
        preconditions,
        grace_period_seconds: wire.grace_period_seconds,
        dry_run: wire.dry_run.unwrap_or_default(),
        propagation_policy: propagation,
        orphan_dependents: wire.orphan_dependents,
        admission: Default::default(),
    })
}

/// `DeleteOptions` as kube's parameter codec reads them from a query.
fn from_query(query: &Query) -> Result<meta::DeleteOptions, ApiError> {
    Ok(meta::DeleteOptions {
        grace_period_seconds: query.int("gracePeriodSeconds")?,
        orphan_dependents: query.opt_bool("orphanDependents"),
        propagation_policy: query.first("propagationPolicy").map(str::to_string),
        dry_run: Some(query.all("dryRun")).filter(|d| !d.is_empty()),
        ..meta::DeleteOptions::default()
    })
}

/// `ValidateDeleteOptions`.
fn validate(opts: &meta::DeleteOptions) -> Result<(), ApiError> {
    let mut errors = Vec::new();
    if let (Some(_), Some(policy)) = (opts.orphan_dependents, &opts.propagation_policy) {
        errors.push(FieldError::invalid(
            "propagationPolicy",
            policy,
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(policy) = &opts.propagation_policy {
        if !["Foreground", "Background", "Orphan"].contains(&policy.as_str()) {
            errors.push(FieldError::not_supported(
                "propagationPolicy",
                policy,
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
    }
    let dry_run = opts.dry_run.clone().unwrap_or_default();
    if dry_run.iter().any(|v| v != "All") {
        errors.push(FieldError::not_supported_list("dryRun", &dry_run, &["All"]));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::InvalidOptions { kind: "DeleteOptions".into(), errors })
    }
}
