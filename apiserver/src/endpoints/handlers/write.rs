//! POST (kube's `CreateResource`) and PUT (`UpdateResource`) of objects and subresources: the body decoded
//! in its content type, the options read from the query and validated as `ValidateCreateOptions` and
//! `ValidateUpdateOptions` do, then the registry. Create answers 201; update 200, or 201 when it created.
//!
//! `fieldValidation` decides what fields the kind does not have do: `Strict` refuses the body (400, the
//! strict decoder's `unknown field "spec.x"` list), `Warn` (the default) answers with one `Warning` header
//! per field, `Ignore` drops them silently. A body whose fields do not even decode fails on that first.

use http::{Response, StatusCode};
use serde_json::Value;

use crate::apis::authentication::tokenrequests;
use crate::endpoints::codec;
use crate::endpoints::error::ApiError;
use crate::endpoints::handlers::{eviction, Call, Target};
use crate::endpoints::negotiate::Format;
use crate::endpoints::query::{write_query, WriteQuery};
use crate::endpoints::response::Responder;
use crate::endpoints::Body;
use crate::endpoints::{authn, ApiServer};
use crate::registry::field_error::FieldError;
use crate::registry::options::UpdateOptions;
use crate::registry::strategies::{pod_binding, workloads};
use crate::registry::{typecheck, RegistryError, Resource, Subresource};
use crate::storage::GetOptions;

/// `POST .../RESOURCE`.
pub(crate) async fn create(
    server: &ApiServer,
    call: &Call,
    target: &Target<'_>,
    responder: &Responder,
) -> Result<Response<Body>, ApiError> {
    let options = write_query(&call.query);
    validate_write_options(&options, "CreateOptions")?;
    let obj = body_object(call, target)?;
    let warnings = field_validation(&options.field_validation, target, &obj, body_format(call))?;
    match target.sub.map(|s| s.sub) {
        Some(Subresource::Binding) => return bind_pod(target, obj, &options, responder).await,
        Some(Subresource::Token) => return request_token(server, target, obj, responder).await,
        Some(Subresource::Eviction) => return eviction::evict(server, target, obj, &options, responder).await,
        _ => {}
    }
    let manager = options.manager(call.header("user-agent"));
    let opts = options.create_options(Some(manager), call.user.clone(), call.admission.clone());
    let created = target.rest.create(&target.namespace, obj, &opts).await?;
    responder.with_warnings(warnings).object(StatusCode::CREATED, &created)
}

/// `PUT .../NAME` and `PUT .../NAME/SUBRESOURCE`.
pub(crate) async fn update(
    call: &Call,
    target: &Target<'_>,
    responder: &Responder,
) -> Result<Response<Body>, ApiError> {
    let options = write_query(&call.query);
    validate_write_options(&options, "UpdateOptions")?;
    let obj = body_object(call, target)?;
    let warnings = field_validation(&options.field_validation, target, &obj, body_format(call))?;
    let responder = &responder.with_warnings(warnings);
    let manager = Some(options.manager(call.header("user-agent")));
    let opts = options.update_options(manager, call.admission.clone());
    let (stored, created) = match target.sub {
        Some(sub) if sub.sub == Subresource::Scale => (update_scale(target, obj, &opts).await?, false),
        Some(sub) => {
            let stored = target.rest.update_subresource(&target.namespace, &target.name, sub.sub, obj, &opts).await?;
            (stored, false)
        }
        None => target.rest.update(&target.namespace, &target.name, obj, &opts).await?,
    };
    responder.object(if created { StatusCode::CREATED } else { StatusCode::OK }, &stored)
}

/// `PUT .../NAME/scale`: the Scale's replicas written into the object (its resourceVersion, if it has one,
/// is the optimistic lock), answered as the object's new Scale (kube's `ScaleREST.Update`).
async fn update_scale(target: &Target<'_>, scale: Value, opts: &UpdateOptions) -> Result<Value, ApiError> {
    check_scale(target, &scale)?;
    let mut apply =
        |current: &Value| target.rest.strategy().apply_scale(current, &scale).ok_or(RegistryError::NoSuchPath);
    let stored = target.rest.patch(&target.namespace, &target.name, Some(Subresource::Scale), &mut apply, opts).await?;
    Ok(scale_of(target, &stored)?)
}

/// The object as its kind's `Scale` (a 404 for a kind without one, which the router never sends here).
pub(crate) fn scale_of(target: &Target<'_>, obj: &Value) -> Result<Value, RegistryError> {
    target.rest.strategy().to_scale(obj).ok_or(RegistryError::NoSuchPath)
}

/// `POST .../pods/NAME/binding`: the pod assigned to the binding's node inside one guaranteed update,
/// answered with a Success `Status` (kube's `BindingREST.Create`).
async fn bind_pod(
    target: &Target<'_>,
    binding: Value,
    options: &WriteQuery,
    responder: &Responder,
) -> Result<Response<Body>, ApiError> {
    pod_binding::validate(&binding, &target.name)?;
    let now = crate::registry::system::rfc3339(responder.now_unix_s);
    let mut apply = |current: &Value| pod_binding::bind(current, &binding, &now);
    // A binding assigns the pod inside one guaranteed update of its own, which tracks no fields.
    let opts = UpdateOptions { dry_run: options.dry_run.clone(), ..UpdateOptions::default() };
    target.rest.patch(&target.namespace, &target.name, Some(Subresource::Binding), &mut apply, &opts).await?;
    let status =
        serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    responder.object(StatusCode::CREATED, &status)
}

/// `POST .../serviceaccounts/NAME/token`: a token for the account, bound to the pod or secret the request
/// names (kube's `TokenREST.Create`); nothing is written.
async fn request_token(
    server: &ApiServer,
    target: &Target<'_>,
    req: Value,
    responder: &Responder,
) -> Result<Response<Body>, ApiError> {
    let ns = &target.namespace;
    tokenrequests::check_names(&req, &target.name, ns)?;
    let account = target.rest.get(ns, &target.name, &GetOptions::default()).await?;
    let bound = tokenrequests::bound_ref(&req)?;
    let bound_obj = match &bound {
        Some(r) => {
            let rest = server.served().rest("", "v1", r.plural).cloned().ok_or(RegistryError::NoSuchPath)?;
            Some(rest.get(ns, &r.name, &GetOptions::default()).await?)
        }
        None => None,
    };
    let answer = tokenrequests::issue(
        req,
        &account,
        bound.as_ref().zip(bound_obj.as_ref()),
        server.clock.now_unix_s(),
        &authn::service_accounts::token_id(server),
        &server.config.service_account_tokens,
    )?;
    responder.object(StatusCode::CREATED, &answer)
}

/// `ValidateScale`, as the scale REST reports it (`Scale.autoscaling "web" is invalid: ...`).
pub(crate) fn check_scale(target: &Target<'_>, scale: &Value) -> Result<(), RegistryError> {
    let errors = workloads::validate_scale(scale);
    if errors.is_empty() {
        return Ok(());
    }
    Err(RegistryError::Invalid { group: "autoscaling".into(), kind: "Scale".into(), name: target.name.clone(), errors })
}

/// The request body as an object of the target's kind, with `apiVersion` and `kind` defaulted from the
/// URL as kube's decoder defaults them.
pub(crate) fn body_object(call: &Call, target: &Target<'_>) -> Result<Value, ApiError> {
    let format = Format::of_content_type(call.header("content-type")).ok_or_else(ApiError::unsupported_media_type)?;
    if format == Format::Protobuf && !target.resource.protobuf {
        return Err(ApiError::unsupported_media_type());
    }
    let kind = target.sub.map_or(target.resource.resource.kind.as_str(), |s| s.kind);
    let mut obj = codec::decode(&call.body, format, kind)?;
    let map = obj.as_object_mut().expect("codec::decode returns objects");
    let api_version = match target.sub.and_then(|s| s.kind_group_version) {
        Some(("", version)) => version.to_string(),
        Some((group, version)) => format!("{group}/{version}"),
        None => target.resource.resource.api_version(),
    };
    if map.get("apiVersion").and_then(Value::as_str).unwrap_or("").is_empty() {
        map.insert("apiVersion".into(), Value::from(api_version));
    }
    if map.get("kind").and_then(Value::as_str).unwrap_or("").is_empty() {
        map.insert("kind".into(), Value::from(kind));
    }
    Ok(obj)
}

/// The format of the request's body (JSON when it names none).
fn body_format(call: &Call) -> Format {
    Format::of_content_type(call.header("content-type")).unwrap_or(Format::Json)
}

/// The kind a request's body carries: the resource's, or its subresource's (`autoscaling/v1` `Scale`).
pub(crate) fn body_resource(target: &Target<'_>) -> Resource {
    let mut resource = target.resource.resource.clone();
    if let Some(sub) = target.sub {
        resource.kind = sub.kind.to_string();
        if let Some((group, version)) = sub.kind_group_version {
            resource.group = group.to_string();
            resource.version = version.to_string();
        }
    }
    resource
}

/// Applies the `fieldValidation` directive to a decoded body: the warnings to send, or the strict
/// decoder's 400. A body that fails to decode into its type fails with that error first (non-strict
/// errors trump), as does a body of the wrong kind.
pub(crate) fn field_validation(
    directive: &str,
    target: &Target<'_>,
    obj: &Value,
    format: Format,
) -> Result<Vec<String>, ApiError> {
    if directive == "Ignore" || format == Format::Protobuf {
        // Protobuf has no unknown fields to report: its decoder skips them by number.
        return Ok(Vec::new());
    }
    let resource = &body_resource(target);
    typecheck::check(resource, obj)?;
    // A custom resource's unknown fields are what its schema prunes; a built-in's, what its type lacks.
    let unknown = match target.sub {
        None => target.rest.strategy().unknown_fields(obj),
        Some(_) => None,
    }
    .unwrap_or_else(|| typecheck::unknown_fields(resource, obj));
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    if directive == "Strict" {
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or(&resource.kind);
        return Err(ApiError::BadRequest(format!(
            "{kind} in version {:?} cannot be handled as a {}: {}",
            resource.version,
            resource.kind,
            typecheck::strict_decoding_error(&unknown)
        )));
    }
    Ok(unknown.iter().map(|field| format!("unknown field {field:?}")).collect())
}

/// The longest field manager name (`FieldManagerMaxLength`).
const FIELD_MANAGER_MAX_BYTES: usize = 128;

/// `ValidateFieldManager`, `ValidateDryRun` and `ValidateFieldValidation`, as a 422 on `kind`
/// (`CreateOptions`, `UpdateOptions`, `PatchOptions`).
pub(crate) fn validate_write_options(options: &WriteQuery, kind: &str) -> Result<(), ApiError> {
    let mut errors = Vec::new();
    validate_field_manager(&options.field_manager, &mut errors);
    if options.dry_run.iter().any(|v| v != "All") {
        errors.push(FieldError::not_supported_list("dryRun", &options.dry_run, &["All"]));
    }
    if !["", "Ignore", "Strict", "Warn"].contains(&options.field_validation.as_str()) {
        errors.push(FieldError::not_supported(
            "fieldValidation",
            &options.field_validation,
            &["", "Ignore", "Strict", "Warn"],
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::InvalidOptions { kind: kind.into(), errors })
    }
}

/// `ValidateFieldManager`: at most 128 bytes, all printable.
pub(crate) fn validate_field_manager(manager: &str, errors: &mut Vec<FieldError>) {
    if manager.len() > FIELD_MANAGER_MAX_BYTES {
        errors.push(FieldError::too_long("fieldManager", FIELD_MANAGER_MAX_BYTES));
    }
    for (i, c) in manager.char_indices() {
        if c.is_control() {
            errors.push(FieldError::invalid(
                "fieldManager",
                manager,
                &format!("invalid character U+{:04X} (at position {i})", c as u32),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_options_are_validated_as_kube_validates_them() {
        let opts =
            WriteQuery { dry_run: vec!["x".into()], field_manager: String::new(), field_validation: "Loud".into() };
        let err = validate_write_options(&opts, "CreateOptions").unwrap_err();
        assert_eq!(
            err.to_status().message.unwrap(),
            r#"CreateOptions.meta.k8s.io "" is invalid: [dryRun: Unsupported value: []string{"x"}: supported values: "All", fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"]"#
        );
        let long = WriteQuery { field_manager: "m".repeat(129), ..WriteQuery::default() };
        assert_eq!(
            validate_write_options(&long, "UpdateOptions").unwrap_err().to_status().message.unwrap(),
            r#"UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes"#
        );
        assert!(validate_write_options(&WriteQuery::default(), "CreateOptions").is_ok());
    }
}
