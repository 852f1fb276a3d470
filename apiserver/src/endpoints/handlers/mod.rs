//! Resource requests: the routes kube-apiserver's installer registers for each resource
//! (`pkg/endpoints/installer.go`), resolved from the [`RequestInfo`], then one handler per verb:
//! [`read`] (get, list), [`watch`], [`write`] (create, update), [`patch`], [`delete`] (delete,
//! deletecollection).
//!
//! Routes per resource: the collection (`GET` list or watch, `POST` create, `DELETE` deletecollection),
//! the object (`GET`, `PUT`, `PATCH`, `DELETE`), each subresource with its own verbs, the deprecated
//! `/watch/` forms, and for namespaced resources the list and watch across namespaces. A path in a group
//! and version the server serves that matches no route is go-restful's 404 `Status`; a route without the
//! request's method is its 405; a path in no served group and version is Go's plain 404.

pub(crate) mod delete;
pub(crate) mod eviction;
pub(crate) mod patch;
pub(crate) mod read;
pub(crate) mod watch;
pub(crate) mod write;

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method};

use crate::apis::Verb;
use crate::apis::{ResourceInfo, SubresourceInfo};
use crate::endpoints::error::ApiError;
use crate::endpoints::query::Query;
use crate::endpoints::request_info::{Action, RequestInfo};
use crate::registry::rest::Rest;

/// One request, as the handlers see it.
pub(crate) struct Call {
    pub info: RequestInfo,
    pub query: Query,
    pub method: Method,
    pub headers: HeaderMap,
    /// The body, read in full up to the request limit (empty for reads).
    pub body: Bytes,
    /// Who the request runs as, once authenticated (and impersonation applied).
    pub user: crate::registry::user::UserInfo,
    /// The request's admission chain, which every write's options carry.
    pub admission: crate::registry::admission::AdmissionHook,
}

impl Call {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// What a resource request acts on.
pub(crate) struct Target<'a> {
    pub resource: &'a ResourceInfo,
    pub rest: Arc<dyn Rest>,
    pub sub: Option<&'a SubresourceInfo>,
    /// The namespace of the path ("" for cluster-scoped resources and lists across namespaces).
    pub namespace: String,
    /// The object's name ("" for the collection).
    pub name: String,
}

/// Resolves a resource request into its target and action, as the installer's routes would.
pub(crate) fn route<'a>(server: &'a crate::endpoints::Served, call: &Call) -> Result<(Target<'a>, Action), ApiError> {
    let info = &call.info;
    if !server.catalog.serves_group_version(&info.api_group, &info.api_version) {
        return Err(ApiError::NoRoute);
    }
    let resource = server
        .catalog
        .get(&info.api_group, &info.api_version, &info.resource)
        .ok_or(ApiError::Generic { code: 404 })?;
    let rest = server
        .rest(&info.api_group, &info.api_version, &info.resource)
        .expect("every catalog resource has a registry")
        .clone();
    if info.parts.len() > 3 {
        return Err(ApiError::Generic { code: 404 });
    }
    // The namespace of the path. For `namespaces` itself, the "namespace" the request info reads is the
    // object's name.
    // `/namespaces/NS/namespaces` names no route: a namespace's own path has its name where the
    // namespace goes.
    if info.resource == "namespaces" && !info.namespace.is_empty() && info.name != info.namespace {
        return Err(ApiError::Generic { code: 404 });
    }
    let namespaced_path = !info.namespace.is_empty() && info.resource != "namespaces";
    let namespace = if resource.namespaced { info.namespace.clone() } else { String::new() };
    if namespaced_path && !resource.namespaced {
        return Err(ApiError::Generic { code: 404 });
    }
    let has_name = !info.name.is_empty();
    if resource.namespaced && !namespaced_path && has_name {
        // There is no `/pods/{name}` route: objects of namespaced resources live under a namespace.
        return Err(ApiError::Generic { code: 404 });
    }
    let sub = match info.subresource.as_str() {
        "" => None,
        name => Some(resource.subresource(name).ok_or(ApiError::Generic { code: 404 })?),
    };
    let method = if call.method == Method::HEAD { Method::GET } else { call.method.clone() };
    let action = if info.verb_in_path {
        // `/watch/...`: a watch of the collection, or of one object.
        if info.verb != Verb::Watch || sub.is_some() || method != Method::GET {
            return Err(ApiError::Generic { code: if info.verb == Verb::Watch { 405 } else { 404 } });
        }
        Action::Watch
    } else if let Some(sub) = sub {
        let action = match method {
            Method::GET => Action::Get,
            Method::PUT => Action::Update,
            Method::PATCH => Action::Patch,
            Method::POST => Action::Create,
            _ => return Err(ApiError::Generic { code: 405 }),
        };
        if !sub.verbs.contains(&action.verb()) {
            return Err(ApiError::Generic { code: 405 });
        }
        action
    } else if has_name {
        match method {
            Method::GET => Action::Get,
            Method::PUT => Action::Update,
            Method::PATCH => Action::Patch,
            Method::DELETE => Action::Delete,
            _ => return Err(ApiError::Generic { code: 405 }),
        }
    } else {
        match method {
            Method::GET if info.verb == Verb::Watch => Action::Watch,
            Method::GET => Action::List,
            // Across namespaces, only reads are routed.
            Method::POST if resource.namespaced && !namespaced_path => return Err(ApiError::Generic { code: 405 }),
            Method::DELETE if resource.namespaced && !namespaced_path => return Err(ApiError::Generic { code: 405 }),
            Method::POST => Action::Create,
            Method::DELETE => Action::DeleteCollection,
            _ => return Err(ApiError::Generic { code: 405 }),
        }
    };
    // A verb the resource lacks has no route (namespaces have no deletecollection); the object-level ones
    // share their path with others, so the method is what is missing.
    let verb = match action {
        Action::Watch if has_name => Verb::Watch,
        other => other.verb(),
    };
    if sub.is_none() && !resource.serves(verb) {
        return Err(ApiError::Generic { code: 405 });
    }
    if resource.terminating && action == Action::Create {
        // apiextensions-apiserver's crdHandler: a CRD being deleted takes no new objects.
        return Err(ApiError::CrdTerminating {
            group: resource.resource.group.clone(),
            resource: resource.resource.plural.clone(),
        });
    }
    let target = Target { resource, rest, sub, namespace, name: info.name.clone() };
    Ok((target, action))
}
